"""A stateful fake of the Cooked REST API (../shared/cooked-api.md) for tests, the demo and the benchmark."""
