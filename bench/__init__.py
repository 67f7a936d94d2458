"""jp's benchmarks (design.md section 8).  Run ``bench/run.py``; see docs/performance.md."""
