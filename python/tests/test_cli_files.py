"""The `sptrans` CLI against SciPy's own files: `.npz` both ways (save_npz -> transpose ->
load_npz), SuiteSparse-style archives. Needs the CLI binary: SPTRANS_BIN (cargo xtask test
sets it); skipped by name without it."""

import os
import subprocess
import tarfile

import numpy as np
import pytest
import scipy.io as sio
import scipy.sparse as sp

from conftest import random_csr

BIN = os.environ.get("SPTRANS_BIN")
pytestmark = pytest.mark.skipif(not BIN or not os.access(BIN, os.X_OK), reason="CLI test skipped: SPTRANS_BIN is not set to the sptrans binary")


# A launcher's variables would make the CLI's commands (other than svd) refuse to run: the
# names of gpu_dist::bootstrap::LAUNCHER_VARS.
LAUNCHER = (
    "RANK", "WORLD_SIZE", "LOCAL_RANK",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
    "SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", "SPTRANS_LAUNCHER",
)


def run(*args):
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER}
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, check=False, env=env)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64])
@pytest.mark.parametrize("compressed", [True, False])
def test_npz_round_trip_through_transpose(tmp_path, fmt, dtype, compressed):
    a = random_csr(300, 200, density=0.05, dtype=dtype, seed=79)
    src, out = tmp_path / "a.npz", tmp_path / "t.npz"
    sp.save_npz(src, a.asformat(fmt), compressed=compressed)
    r = run("transpose", "--algo", "serial", src, "-o", out)
    assert r.returncode == 0, r.stderr
    t = sp.load_npz(out)
    assert t.format == "csr" and t.shape == (200, 300)
    ref = a.T.tocsr()
    ref.sort_indices()
    assert np.array_equal(t.indptr, ref.indptr) and np.array_equal(t.indices, ref.indices)
    assert t.data.tobytes() == ref.data.astype(t.dtype).tobytes()


def test_suitesparse_archive_and_bad_npz(tmp_path):
    a = random_csr(120, 90, density=0.05, seed=83)
    d = tmp_path / "M"
    d.mkdir()
    sio.mmwrite(d / "M.mtx", a)
    sio.mmwrite(d / "M_b.mtx", np.ones((120, 1)))
    tgz = tmp_path / "M.tar.gz"
    with tarfile.open(tgz, "w:gz") as tf:
        tf.add(d / "M_b.mtx", arcname="M/M_b.mtx")
        tf.add(d / "M.mtx", arcname="M/M.mtx")
    out = tmp_path / "t.npz"
    r = run("transpose", "--algo", "serial", tgz, "-o", out)
    assert r.returncode == 0, r.stderr
    assert abs(sp.load_npz(out) - a.T).max() == 0
    bad = tmp_path / "bad.npz"
    np.savez(bad, data=np.ones(3))
    r = run("transpose", bad, "-o", tmp_path / "x.mtx")
    assert r.returncode == 1 and "npz" in r.stderr and "panicked" not in r.stderr


@pytest.mark.parametrize("x_kind", ["npy", "text", "mtx"])
def test_spmv_vectors_as_users_hold_them(tmp_path, x_kind):
    a = random_csr(400, 250, density=0.03, seed=89)
    src = tmp_path / "a.npz"
    sp.save_npz(src, a)
    x = np.random.default_rng(2).standard_normal(250)
    xp = tmp_path / f"x.{x_kind}"
    if x_kind == "npy":
        np.save(xp, x)
    elif x_kind == "text":
        xp.write_text("\n".join(repr(float(v)) for v in x))
    else:
        sio.mmwrite(xp, x.reshape(-1, 1))
    yp = tmp_path / "y.npy"
    r = run("spmv", src, "--x", xp, "-o", yp, "--precision", "f64")
    assert r.returncode == 0, r.stderr
    y = np.load(yp)
    assert y.shape == (400,) and np.abs(y - a @ x).max() <= 1e-12 * np.abs(a).sum(axis=1).max()
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2 three")
    r = run("spmv", src, "--x", bad, "-o", tmp_path / "z.mtx")
    assert r.returncode != 0 and "entry 3" in r.stderr and "panicked" not in r.stderr
