"""forge's control side: CLI, configuration, agents, loop, store."""

__version__ = "0.1.0"
