"""LLM machinery and the alignment-first state machine."""
