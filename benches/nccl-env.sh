#!/usr/bin/env bash
# NCCL for the multi-GPU device scripts (sourced: `. benches/nccl-env.sh`): PyTorch's wheel's
# libnccl.so.2 (else the first one on the machine), linked as libnccl.so (the name cudarc's
# loader asks for) into a directory put first on LD_LIBRARY_PATH, and NVLink multicast off.
lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
[ -f "$lib/libnccl.so.2" ] || lib=$(dirname "$(find / -name 'libnccl.so.2' 2>/dev/null | head -1)")
mkdir -p /tmp/ncclso && ln -sf "$lib/libnccl.so.2" /tmp/ncclso/libnccl.so
export LD_LIBRARY_PATH=/tmp/ncclso:${LD_LIBRARY_PATH:-} NCCL_NVLS_ENABLE=0
