//! One process per GPU: where this process stands in a launch ([`RankEnv`], from the launcher's
//! environment variables) and how the NCCL unique id travels from rank 0 to the others
//! ([`exchange_id`]: a file or a TCP socket). [`crate::Comms::from_env`] builds on both.
//!
//! The variables, first found wins:
//!
//! | launcher | rank | world size | GPU of this host |
//! |---|---|---|---|
//! | `torchrun`, most others | `RANK` | `WORLD_SIZE` | `LOCAL_RANK` |
//! | Open MPI `mpirun` | `OMPI_COMM_WORLD_RANK` | `OMPI_COMM_WORLD_SIZE` | `OMPI_COMM_WORLD_LOCAL_RANK` |
//! | Slurm `srun` | `SLURM_PROCID` | `SLURM_STEP_NUM_TASKS` | `SLURM_LOCALID` |
//!
//! (the local rank defaults to the rank). Slurm's world is the job step's task count, which only
//! `srun` sets: a batch script's own process (`sbatch`, `salloc`: `SLURM_NTASKS` set, no step)
//! is one process, not a rank. `SPTRANS_LAUNCHER=none` ignores every launcher variable (a single
//! process started under a launcher's environment). The id: `SPTRANS_NCCL_ID_FILE=path` (rank 0 writes it,
//! the others wait for it; it must not exist before the launch, and rank 0 removes it once every
//! rank has joined), or `SPTRANS_NCCL_ID_ADDR=host:port` (rank 0 listens there and hands the id
//! to each rank that connects), which defaults to `MASTER_ADDR` and `MASTER_PORT + 1` where
//! those are set (torchrun sets them; its own store holds `MASTER_PORT`). Waiting ends after
//! `SPTRANS_NCCL_ID_TIMEOUT` seconds (default 120) with an error naming what was waited for.
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use gpu_runtime::{Error, Result};

/// This process's place in a multi-process launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankEnv {
    /// Its rank, `0 .. world`.
    pub rank: usize,
    /// The number of ranks (processes, one GPU each).
    pub world: usize,
    /// The GPU it drives on its host (device ordinal).
    pub local_rank: usize,
}

/// The launchers' variable names, `[rank, world size, local rank]` for each launcher of the
/// module docs' table, in the order [`RankEnv::from_vars`] tries them.
pub const LAUNCHER_VARS: [[&str; 3]; 3] = [
    ["RANK", "WORLD_SIZE", "LOCAL_RANK"],
    ["OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"],
    ["SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID"],
];

/// The variable that, set to `none`, makes [`RankEnv::from_vars`] ignore every launcher.
pub const LAUNCHER_OVERRIDE: &str = "SPTRANS_LAUNCHER";

impl RankEnv {
    /// Reads the launcher's variables (module docs) through `get`; `None` when no launcher's
    /// rank and world size are both set, or when [`LAUNCHER_OVERRIDE`] is `none`.
    ///
    /// # Errors
    /// [`Error::Bootstrap`] for a value that is not a number, a world size of 0 or a rank past
    /// it, or an override other than `none`.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Option<Self>> {
        match get(LAUNCHER_OVERRIDE).as_deref().map(str::trim) {
            None | Some("") | Some("auto") => {}
            Some("none") => return Ok(None),
            Some(v) => {
                return Err(Error::Bootstrap(format!(
                    "{LAUNCHER_OVERRIDE}={v:?}: `none` (one process, whatever the launcher variables say) or `auto`"
                )))
            }
        }
        for [r, w, l] in LAUNCHER_VARS {
            let (Some(rank), Some(world)) = (get(r), get(w)) else { continue };
            let num = |name: &str, v: &str| v.trim().parse::<usize>().map_err(|_| Error::Bootstrap(format!("{name}={v:?} is not a number")));
            let (rank, world) = (num(r, &rank)?, num(w, &world)?);
            let local_rank = match get(l) {
                Some(v) => num(l, &v)?,
                None => rank,
            };
            if world == 0 || rank >= world {
                return Err(Error::Bootstrap(format!("{r}={rank} with {w}={world}: the rank must be below the world size")));
            }
            return Ok(Some(Self { rank, world, local_rank }));
        }
        Ok(None)
    }

    /// [`RankEnv::from_vars`] on this process's environment.
    ///
    /// # Errors
    /// As [`RankEnv::from_vars`].
    pub fn from_env() -> Result<Option<Self>> {
        Self::from_vars(|k| std::env::var(k).ok())
    }
}

/// Bytes of an NCCL unique id.
pub const ID_BYTES: usize = 128;

/// What starts each id message on the socket: a tag and the world size (a rank of another
/// launch that connects by mistake is refused).
const MAGIC: &[u8; 8] = b"SPTRNCID";

/// Where the id travels, from the environment (module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdChannel {
    /// A file rank 0 writes.
    File(std::path::PathBuf),
    /// A TCP address rank 0 listens on.
    Tcp(String),
}

impl IdChannel {
    /// The channel the variables name through `get`, `None` when none is set.
    ///
    /// # Errors
    /// [`Error::Bootstrap`] for a `MASTER_PORT` that is not a port number.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Option<Self>> {
        if let Some(p) = get("SPTRANS_NCCL_ID_FILE") {
            return Ok(Some(Self::File(p.into())));
        }
        if let Some(a) = get("SPTRANS_NCCL_ID_ADDR") {
            return Ok(Some(Self::Tcp(a)));
        }
        if let (Some(host), Some(port)) = (get("MASTER_ADDR"), get("MASTER_PORT")) {
            let p: u16 = port.trim().parse().map_err(|_| Error::Bootstrap(format!("MASTER_PORT={port:?} is not a port number")))?;
            let next = p.checked_add(1).ok_or_else(|| Error::Bootstrap(format!("MASTER_PORT={p}: no port after it for the NCCL id")))?;
            return Ok(Some(Self::Tcp(format!("{host}:{next}"))));
        }
        Ok(None)
    }
}

/// How long to wait for the id (`SPTRANS_NCCL_ID_TIMEOUT` seconds, default 120).
fn timeout() -> Duration {
    Duration::from_secs_f64(std::env::var("SPTRANS_NCCL_ID_TIMEOUT").ok().and_then(|v| v.parse().ok()).unwrap_or(120.0))
}

/// The NCCL id of a launch: on rank 0 `make()` (NCCL's `ncclGetUniqueId`), handed to the other
/// ranks through `channel`; on the others, what rank 0 handed over. With one rank no channel is
/// needed.
///
/// # Errors
/// [`Error::Bootstrap`] when several ranks have no channel, or the file or socket fails or times
/// out (naming the path or address and the wait); `make`'s error.
pub fn exchange_id(env: &RankEnv, channel: Option<&IdChannel>, make: impl FnOnce() -> Result<[u8; ID_BYTES]>) -> Result<[u8; ID_BYTES]> {
    if env.world == 1 {
        return make();
    }
    let Some(channel) = channel else {
        return Err(Error::Bootstrap(format!(
            "{} ranks need a way to share NCCL's id: set SPTRANS_NCCL_ID_FILE (a path all ranks see) or SPTRANS_NCCL_ID_ADDR (host:port of rank 0), or MASTER_ADDR and MASTER_PORT",
            env.world
        )));
    };
    let deadline = Instant::now() + timeout();
    match channel {
        IdChannel::File(path) => {
            let io = |what: &str, e: std::io::Error| Error::Bootstrap(format!("{what} {}: {e}", path.display()));
            if env.rank == 0 {
                let id = make()?;
                // Written whole under another name, then renamed: a reader sees all or nothing.
                let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
                std::fs::write(&tmp, id).map_err(|e| io("writing the NCCL id to", e))?;
                std::fs::rename(&tmp, path).map_err(|e| io("renaming the NCCL id file to", e))?;
                return Ok(id);
            }
            loop {
                match std::fs::read(path) {
                    Ok(b) if b.len() == ID_BYTES => return Ok(b.try_into().unwrap_or([0; ID_BYTES])),
                    Ok(b) => return Err(Error::Bootstrap(format!("{} holds {} bytes, not an NCCL id of {ID_BYTES}", path.display(), b.len()))),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound && Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
                    Err(e) => return Err(io(&format!("rank {} waited {:.0} s for the NCCL id in", env.rank, timeout().as_secs_f64()), e)),
                }
            }
        }
        IdChannel::Tcp(addr) => {
            let io = |what: &str, e: std::io::Error| Error::Bootstrap(format!("{what} {addr}: {e}"));
            let mut msg = MAGIC.to_vec();
            msg.extend_from_slice(&(env.world as u32).to_le_bytes());
            if env.rank == 0 {
                let id = make()?;
                msg.extend_from_slice(&id);
                let listener = std::net::TcpListener::bind(addr).map_err(|e| io("rank 0 could not listen on", e))?;
                listener.set_nonblocking(true).map_err(|e| io("listening on", e))?;
                let mut served = 0;
                while served < env.world - 1 {
                    match listener.accept() {
                        Ok((mut s, _)) => {
                            s.set_nonblocking(false).map_err(|e| io("serving", e))?;
                            s.write_all(&msg).map_err(|e| io("sending the NCCL id from", e))?;
                            served += 1;
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                            std::thread::sleep(Duration::from_millis(20))
                        }
                        Err(e) => return Err(io(&format!("rank 0 served {served} of {} ranks, then waiting on", env.world - 1), e)),
                    }
                }
                return Ok(id);
            }
            loop {
                match std::net::TcpStream::connect(addr) {
                    Ok(mut s) => {
                        let mut got = vec![0u8; msg.len() + ID_BYTES];
                        s.read_exact(&mut got).map_err(|e| io("reading the NCCL id from", e))?;
                        if got[..msg.len()] != msg[..] {
                            return Err(Error::Bootstrap(format!("{addr} answered, but not as rank 0 of a launch of {} ranks", env.world)));
                        }
                        return Ok(got[msg.len()..].try_into().unwrap_or([0; ID_BYTES]));
                    }
                    Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
                    Err(e) => return Err(io(&format!("rank {} waited {:.0} s for rank 0 at", env.rank, timeout().as_secs_f64()), e)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(list: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| list.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn launchers_variables_are_read_in_order() {
        assert_eq!(RankEnv::from_vars(vars(&[])).unwrap(), None);
        let t = RankEnv::from_vars(vars(&[("RANK", "3"), ("WORLD_SIZE", "4"), ("LOCAL_RANK", "1")])).unwrap();
        assert_eq!(t, Some(RankEnv { rank: 3, world: 4, local_rank: 1 }));
        let m = RankEnv::from_vars(vars(&[("OMPI_COMM_WORLD_RANK", "2"), ("OMPI_COMM_WORLD_SIZE", "8")])).unwrap();
        assert_eq!(m, Some(RankEnv { rank: 2, world: 8, local_rank: 2 }));
        // A batch script under sbatch: a task count but no job step, so one process.
        assert_eq!(RankEnv::from_vars(vars(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "4"), ("SLURM_LOCALID", "0")])).unwrap(), None);
        let st =
            RankEnv::from_vars(vars(&[("SLURM_PROCID", "3"), ("SLURM_NTASKS", "4"), ("SLURM_STEP_NUM_TASKS", "4"), ("SLURM_LOCALID", "1")])).unwrap();
        assert_eq!(st, Some(RankEnv { rank: 3, world: 4, local_rank: 1 }), "srun's step");
        assert_eq!(RankEnv::from_vars(vars(&[("RANK", "1"), ("WORLD_SIZE", "2"), ("SPTRANS_LAUNCHER", "none")])).unwrap(), None);
        assert!(matches!(RankEnv::from_vars(vars(&[("SPTRANS_LAUNCHER", "mpi")])), Err(Error::Bootstrap(_))));
        let s = RankEnv::from_vars(vars(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_STEP_NUM_TASKS", "2"),
            ("SLURM_LOCALID", "0"),
            ("RANK", "1"),
            ("WORLD_SIZE", "2"),
        ]))
        .unwrap();
        assert_eq!(s, Some(RankEnv { rank: 1, world: 2, local_rank: 1 }), "torchrun's names come first");
        for bad in [[("RANK", "x"), ("WORLD_SIZE", "2")], [("RANK", "2"), ("WORLD_SIZE", "2")], [("RANK", "0"), ("WORLD_SIZE", "0")]] {
            assert!(matches!(RankEnv::from_vars(vars(&bad)), Err(Error::Bootstrap(_))), "{bad:?}");
        }
    }

    #[test]
    fn id_channels_from_the_environment() {
        assert_eq!(IdChannel::from_vars(vars(&[])).unwrap(), None);
        assert_eq!(IdChannel::from_vars(vars(&[("MASTER_ADDR", "h"), ("MASTER_PORT", "29500")])).unwrap(), Some(IdChannel::Tcp("h:29501".into())));
        let f = IdChannel::from_vars(vars(&[("SPTRANS_NCCL_ID_FILE", "/x/id"), ("MASTER_ADDR", "h"), ("MASTER_PORT", "1")])).unwrap();
        assert_eq!(f, Some(IdChannel::File("/x/id".into())));
        assert!(matches!(IdChannel::from_vars(vars(&[("MASTER_ADDR", "h"), ("MASTER_PORT", "65535")])), Err(Error::Bootstrap(_))));
    }

    /// The id reaches every rank through a file and through a socket (threads as ranks), and a
    /// rank with no channel, or waiting for a rank 0 that never comes, gets an error.
    #[test]
    fn the_id_travels_by_file_and_socket() {
        let dir = std::env::temp_dir().join(format!("sptrans-id-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let id: [u8; ID_BYTES] = std::array::from_fn(|i| (i * 7 + 3) as u8);
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        for channel in [IdChannel::File(dir.join("id")), IdChannel::Tcp(format!("127.0.0.1:{port}"))] {
            let got: Vec<[u8; ID_BYTES]> = std::thread::scope(|sc| {
                let jobs: Vec<_> = (0..3)
                    .map(|rank| {
                        let channel = &channel;
                        sc.spawn(move || exchange_id(&RankEnv { rank, world: 3, local_rank: 0 }, Some(channel), || Ok(id)).unwrap())
                    })
                    .collect();
                jobs.into_iter().map(|j| j.join().unwrap()).collect()
            });
            assert!(got.iter().all(|g| *g == id), "{channel:?}");
        }
        let env = RankEnv { rank: 1, world: 2, local_rank: 1 };
        assert!(matches!(exchange_id(&env, None, || Ok(id)), Err(Error::Bootstrap(_))));
        std::env::set_var("SPTRANS_NCCL_ID_TIMEOUT", "0.3");
        assert!(matches!(exchange_id(&env, Some(&IdChannel::File(dir.join("never"))), || Ok(id)), Err(Error::Bootstrap(_))));
        std::env::remove_var("SPTRANS_NCCL_ID_TIMEOUT");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
