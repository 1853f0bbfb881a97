"""Run every benchmark in one process and print the tables (markdown) with the machine's details.

    python benchmarks/run_all.py            # about seven minutes on 2 cores

Paste the output into benchmarks/RESULTS.md. Run on a quiet machine: two busy cores make
OpenBLAS's two threads wait for each other and every figure meaningless.
"""
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(__file__))

import numba  # noqa: E402
import numpy as np  # noqa: E402

import bench_attention  # noqa: E402
import bench_compile  # noqa: E402
import bench_composed  # noqa: E402
import bench_fused  # noqa: E402
import bench_outside_models  # noqa: E402
import bench_overhead  # noqa: E402
import bench_recurrent  # noqa: E402
import bench_scaling  # noqa: E402
import bench_seq2seq  # noqa: E402
import bench_softmax  # noqa: E402
import bench_transformer  # noqa: E402


def main():
    try:
        import torch
        torch_version = torch.__version__
    except ImportError:
        torch_version = "not installed"
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.processor() or platform.platform()}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, torch {torch_version}\n")
    for title, module in [("Compile", bench_compile), ("Per-op overhead", bench_overhead),
                          ("Softmax", bench_softmax), ("Scaled dot-product attention", bench_attention),
                          ("GRU", bench_recurrent), ("Transformer encoder layer (1 thread)", bench_transformer),
                          ("Fused kernels", bench_fused), ("Seq2Seq training step", bench_seq2seq),
                          ("Seq2Seq scaling", bench_scaling),
                          ("A model composed of primitives (1 thread)", bench_composed),
                          ("Models written as a PyTorch user writes them (1 thread)", bench_outside_models)]:
        print(f"\n### {title}\n")
        module.run()


if __name__ == "__main__":
    main()
