"""A scripted chat model: the LLM boundary fake used by tests (no network).

It answers each call with the next queued reply; a queued exception is raised instead, which is
how tests simulate transport errors. Every prompt it receives is kept for assertions.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field


class ScriptedChatModel(BaseChatModel):
    """Returns queued replies in order; raises queued exceptions; records what it was sent."""

    replies: list[Any] = Field(default_factory=list)
    received: list[list[BaseMessage]] = Field(default_factory=list)
    model_name: str = "scripted-model"
    input_tokens_per_call: int = 1000
    cached_tokens_per_call: int = 0
    output_tokens_per_call: int = 100

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        self.received.append(list(messages))
        if not self.replies:
            raise AssertionError("scripted model ran out of replies")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            reply = reply(messages)
        message = reply if isinstance(reply, AIMessage) else AIMessage(
            content=reply,
            usage_metadata={
                "input_tokens": self.input_tokens_per_call,
                "output_tokens": self.output_tokens_per_call,
                "total_tokens": self.input_tokens_per_call + self.output_tokens_per_call,
                "input_token_details": {"cache_read": self.cached_tokens_per_call},
            },
            response_metadata={"model_name": self.model_name},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])
