"""Prompt caching of a conversation's stable prefix (system prompt + the paper).

Anthropic caches a prompt only up to a content block marked with `cache_control`; reads of the
cached prefix are billed at a tenth of the input price. OpenAI caches long prefixes by itself
and defines no such key, and langchain-openai forwards unknown block keys to the API unchanged,
so the mark is set for Anthropic only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}
MARKED_PROVIDERS = frozenset({"anthropic"})


def mark_cacheable(messages: Sequence[BaseMessage], prefix_len: int,
                   provider: str) -> list[BaseMessage]:
    """Mark the end of the stable prefix as a cache breakpoint.

    Args:
        messages: the conversation; left unchanged.
        prefix_len: how many leading messages never change between calls (e.g. 2: the system
            prompt and the user message carrying the paper). 0 marks nothing.
        provider: the model's provider (`anthropic`, `openai`, ...) or a whole spec string
            (`anthropic:claude-sonnet-4-6`); only Anthropic models are marked.

    Returns:
        A new list; for Anthropic, message `prefix_len - 1` is a copy whose last content block
        carries `cache_control` (a string content becomes one text block). A message without a
        non-empty last block is left as it is: Anthropic rejects a mark on empty text.

    Raises:
        ValueError: `prefix_len` is negative or longer than the conversation.
    """
    if not 0 <= prefix_len <= len(messages):
        raise ValueError(f"prefix_len {prefix_len} outside 0..{len(messages)} messages")
    marked = list(messages)
    if prefix_len == 0 or provider.split(":", 1)[0] not in MARKED_PROVIDERS:
        return marked
    end = marked[prefix_len - 1]
    content = _with_breakpoint(end.content)
    if content is not None:
        marked[prefix_len - 1] = end.model_copy(update={"content": content})
    return marked


def _with_breakpoint(content: str | list[Any]) -> list[dict[str, Any]] | None:
    """The content as blocks, the last one marked; None when there is nothing to mark."""
    blocks = _as_blocks(content)
    if not blocks or (blocks[-1].get("type") == "text" and not blocks[-1].get("text")):
        return None
    blocks[-1] = {**blocks[-1], "cache_control": dict(CACHE_CONTROL)}
    return blocks


def _as_blocks(content: str | list[Any]) -> list[dict[str, Any]]:
    items = [content] if isinstance(content, str) else content
    return [{"type": "text", "text": item} if isinstance(item, str) else dict(item)
            for item in items]
