"""PaperCoder's prompts, written for this project from the published description of the
baseline (planning as one four-turn conversation, a logic analysis per file, then the code of
each file in task order with every earlier file in context)."""

from __future__ import annotations

PLAN_SYSTEM = """\
You are an experienced machine-learning researcher and planner. You will receive a research \
paper as a structured JSON document. Your job is to plan a reproduction of its methods and \
experiments that is detailed, practical and faithful: follow the paper's methods, datasets, \
settings, hyperparameters and evaluation exactly, and organise the plan so that it can be \
implemented directly."""


def plan_request(document: str) -> str:
    return f"""\
## Paper
{document}

## Task
No official code has been released for this paper. Before any code is written, lay out a \
plan to reproduce it. Cover the method in detail and every experiment: datasets, experimental \
settings, hyperparameters and evaluation metrics. Make the plan as detailed as you can, do not \
write code yet, and point out anything that the paper leaves unclear."""


DESIGN_REQUEST = """\
Now design the software. Keep it concise and usable, use well-known open-source libraries, and \
make it complete enough to reproduce the plan.

Answer with a JSON object between [CONTENT] and [/CONTENT] with exactly these keys:
- "Implementation approach": a short text;
- "File list": the relative paths of the files to write (it must contain main.py);
- "Data structures and interfaces": a mermaid classDiagram of every class, with typed fields \
and methods;
- "Program call flow": a mermaid sequenceDiagram of how main.py drives those classes;
- "Anything UNCLEAR": a short text.

Example:
[CONTENT]
{"Implementation approach": "PyTorch model and trainer, YAML configuration.",
 "File list": ["main.py", "model.py", "trainer.py"],
 "Data structures and interfaces": "classDiagram\\n class Model {+forward(x: Tensor) Tensor}",
 "Program call flow": "sequenceDiagram\\n participant M as Main\\n M->>Model: forward",
 "Anything UNCLEAR": "The learning-rate schedule is not stated."}
[/CONTENT]"""

TASK_REQUEST = """\
Now break the work into tasks and analyse their dependencies. The task list matters most: put \
it first and order it so that every file comes after the files it imports.

Answer with a JSON object between [CONTENT] and [/CONTENT] with exactly these keys:
- "Task list": every file of the design, in dependency order;
- "Required packages": requirements.txt lines;
- "Required Other language third-party packages": a list (may say none are needed);
- "Logic Analysis": a list of [file, one or two sentences on what it does and what it uses];
- "Full API spec": an OpenAPI text, or "" when there is none;
- "Shared Knowledge": what several files rely on;
- "Anything UNCLEAR": a short text."""

CONFIG_REQUEST = """\
You write clean, modular, Google-style code. From the paper and the plan, write the \
configuration file of the reproduction: every training and evaluation setting the paper states \
(learning rate, batch size, epochs, model sizes, seeds, ...). Take values only from the paper; \
never invent one.

Answer with a section headed `## Code: config.yaml` holding one ```yaml block."""

ANALYSIS_SYSTEM = """\
You are an expert researcher, analyst and software engineer. You receive a paper (as JSON), a \
reproduction plan, a software design (implementation approach, file list, data structures and \
interfaces, program call flow), a task breakdown and a config.yaml. Write a thorough logic \
analysis of one file, so that its code can be written faithfully:
- follow the paper's method and experiments exactly;
- be structured and concise;
- keep to the design's data structures and interfaces: do not change them or add public \
methods;
- take every setting from config.yaml; never invent values."""

CODING_SYSTEM = """\
You are an expert researcher and software engineer. You receive a paper (as JSON), a \
reproduction plan, a software design, a task breakdown, a config.yaml and the code written so \
far. Write the code of one file of a repository that reproduces the paper: correct, complete, \
modular and in Google style, following the paper strictly. Quote strings with triple quotes \
where a docstring is due."""

SEPARATOR = "\n\n-----\n\n"


def shared_context(document: str, plan: str, design: str, tasks: str, config: str) -> str:
    """The inputs every analysis and coding request repeats."""
    return SEPARATOR.join([f"## Paper\n{document}", f"## Overview of the plan\n{plan}",
                           f"## Design\n{design}", f"## Task\n{tasks}",
                           f"## Configuration file\n```yaml\n{config}\n```"])


def analysis_request(context: str, file: str, purpose: str) -> str:
    intended = f" It is meant for: {purpose}" if purpose else ""
    return f"""\
# Context
{context}

-----

# Instruction
Write the logic analysis of {file}, to guide writing its code. Do not write code yet.{intended}

## Logic Analysis: {file}"""


def coding_request(context: str, code_files: dict[str, str], done: list[str], file: str,
                   analysis: str) -> str:
    shown = "\n\n".join(f"```python\n{text}\n```" for text in code_files.values())
    return f"""\
# Context
{context}

-----

## Code Files
{shown}

-----

# Format example
## Code: {file}
```python
## {file}
...
```

-----

# Instruction
Using the paper, plan, design, tasks and configuration above, and following the format example, \
write the code of {file} only. Files already written: {done!r}.
1. Write this one file and nothing else.
2. Make the code complete, correct and reusable.
3. Give every setting a default value, use explicit types, avoid circular imports.
4. Keep exactly to the design's data structures and interfaces.
5. Leave out no class or function the design names for this file.
6. Import everything before you use it.
7. Implement every detail; no TODOs or placeholders.
8. Take settings from config.yaml; never invent values.

{analysis}

## Code: {file}"""
