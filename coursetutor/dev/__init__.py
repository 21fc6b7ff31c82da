"""Tools for working on coursetutor: throwaway PostgreSQL and Redis servers for tests and
benchmarks."""
