// Benchmarks that need no server. Run through `make bench` (release build).
JSONBenchmark.run()
PredicateBenchmark.run()
