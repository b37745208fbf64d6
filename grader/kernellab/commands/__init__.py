"""One module per `kernellab` verb, each with `add_parser(subparsers)` and `run(args) -> int`."""
