"""Replay of a recorded PaperCoder run: its planning and analysis replies, and coding replies
synthesised from the released repository (the release did not record coding replies).

The model is stateless. It tells the three stages apart by the request itself: a coding request
ends with `## Code: <file>`, an analysis request with `## Logic Analysis: <file>` (the headers
PaperCoder's prompts end with), and anything else is the planning conversation, whose turn is
the number of assistant messages it already holds. A coding reply is the released file in one
fenced block; a file the release does not hold (it dropped every data/ and configs/ folder)
gets an empty block and is counted in `unrecorded`. A released file that itself holds a fence
line is what the original kept when its reply had no complete fence: it is served as it is.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from sabench.agent.replay import RecordingEnded, RecordingError

CODE_HEADER = re.compile(r"## Code: (\S+)")
ANALYSIS_HEADER = re.compile(r"## Logic Analysis: (\S+)")
ANALYSIS_SUFFIX = "_simple_analysis_response.json"


class PaperCoderReplay(BaseChatModel):
    """Serves a PaperCoder run's recorded replies by stage and file."""

    planning: list[dict[str, Any]] = Field(default_factory=list)
    analyses: dict[str, dict[str, Any]] = Field(default_factory=dict)
    released: str | None = None
    model_name: str = "replay"
    unrecorded: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "replay-papercoder"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        lines = str(messages[-1].content).rstrip().splitlines() or [""]
        coding, analysis = CODE_HEADER.fullmatch(lines[-1]), ANALYSIS_HEADER.fullmatch(lines[-1])
        if coding:
            return self._result(self._coding_reply(coding.group(1)), {})
        if analysis:
            return self._result(*self._analysis_reply(analysis.group(1)))
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if turn >= len(self.planning):
            raise RecordingEnded(f"planning turn {turn + 1} was not recorded")
        return self._result(*completion_parts(self.planning[turn]))

    def _analysis_reply(self, file: str) -> tuple[str, dict[str, Any]]:
        recorded = self.analyses.get(file.replace("/", "_"))
        if recorded is None:
            raise RecordingEnded(f"no recorded analysis of {file}")
        return completion_parts(recorded)

    def _coding_reply(self, file: str) -> str:
        path = Path(self.released) / file if self.released else None
        if path is None or not path.is_file():
            self.unrecorded.append(file)
            return f"## Code: {file}\n```python\n```\n"
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        if re.search(r"^```", text, re.MULTILINE):
            # The original found no complete fence in its reply (cut at max tokens, most
            # often) and kept the whole reply: so does this one.
            return text
        ending = "" if text.endswith("\n") or not text else "\n"
        return f"## Code: {file}\n```python\n{text}{ending}```\n"

    def _result(self, text: str, usage: dict[str, Any]) -> ChatResult:
        message = AIMessage(content=text, response_metadata={
            "model_name": usage.get("model") or self.model_name,
            "finish_reason": usage.get("finish_reason")})
        message.usage_metadata = {
            "input_tokens": int(usage.get("prompt_tokens") or 0),
            "output_tokens": int(usage.get("completion_tokens") or 0),
            "total_tokens": int(usage.get("prompt_tokens") or 0)
            + int(usage.get("completion_tokens") or 0)}
        return ChatResult(generations=[ChatGeneration(message=message)])


def completion_parts(completion: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The text of a recorded chat completion, and its usage, model and finish reason."""
    choice = completion["choices"][0]
    usage = dict(completion.get("usage") or {})
    usage.update(model=completion.get("model"), finish_reason=choice.get("finish_reason"))
    return choice["message"].get("content") or "", usage


def load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise RecordingError(f"{path}: not a recorded response ({exc})") from None


def papercoder_replay(run_dir: Path, released: Path | None = None) -> PaperCoderReplay:
    """The replay model of a recorded PaperCoder run (`released`: its repository)."""
    run_dir = Path(run_dir)
    planning = load_json(run_dir / "planning_response.json")
    if not isinstance(planning, list) or len(planning) != 4:
        raise RecordingError(f"{run_dir / 'planning_response.json'}: expected 4 responses")
    analyses = {}
    for path in sorted(run_dir.glob(f"*{ANALYSIS_SUFFIX}")):
        recorded = load_json(path)
        analyses[path.name[:-len(ANALYSIS_SUFFIX)]] = recorded[0] if isinstance(
            recorded, list) else recorded
    return PaperCoderReplay(planning=planning, analyses=analyses,
                            released=str(released) if released else None,
                            model_name=str(planning[0].get("model") or "replay"))
