"""Running a GitHub Actions workflow's steps on this machine, in order, for
tests: every `run:` step (the workflow's and those of the local composite
action `uses: ./`) runs as GitHub runs it (bash, -e, the GITHUB_* files,
expressions substituted first); the `uses:` steps that need GitHub's services
have stand-ins:

- actions/checkout: the repository's files (tracked and new, as in the work
  tree) copied into the workspace;
- actions/cache: a folder of saved paths keyed as the action keys them
  (exact key, then the restore-keys prefixes, newest first), saved at the end
  of a job that passed;
- actions/upload-artifact / download-artifact: folders, laid out as the
  actions lay them out (the upload's root is the least common ancestor of its
  search paths, `!` lines exclude; a download without merge-multiple puts each
  artifact in a folder named after it).

Jobs run one after the other in the same workspace path (as GitHub's runners
use one path per repository), emptied between jobs; the tool cache is kept (as
on a self-hosted runner).  `runs-on` and `container` are recorded, not
obeyed: the jobs run on this machine.  Expressions: the subset the workflow
uses (contexts, literals, !, ==, !=, &&, ||, fromJSON, the status
functions); anything else is an error, so nothing is skipped unnoticed.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

FAKE_SHA = "0123456789abcdef0123456789abcdef01234567"


class WorkflowError(Exception):
    pass


# -- expressions -------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||[!().,])"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))")


def _tokens(text: str) -> list[tuple[str, str]]:
    out, at = [], 0
    text = text.strip()
    while at < len(text):
        match = _TOKEN.match(text, at)
        if not match or match.end() == at:
            raise WorkflowError(f"cannot read expression {text!r} at {text[at:]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        at = match.end()
    return out


class _Parser:
    """expr := or; or := and ('||' and)*; and := cmp ('&&' cmp)*;
    cmp := unary (('=='|'!=') unary)?; unary := '!' unary | primary;
    primary := literal | '(' expr ')' | call | path."""

    def __init__(self, text: str, scope: "Scope"):
        self.tokens, self.at, self.scope, self.text = _tokens(text), 0, scope, text

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None or (value is not None and token[1] != value):
            raise WorkflowError(f"expression {self.text!r}: expected {value or 'more'}")
        self.at += 1
        return token

    def parse(self) -> Any:
        value = self.or_()
        if self.peek() is not None:
            raise WorkflowError(f"expression {self.text!r}: unexpected {self.peek()}")
        return value

    def or_(self):
        value = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_()
            value = value if truthy(value) else right
        return value

    def and_(self):
        value = self.cmp()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.cmp()
            value = right if truthy(value) else value
        return value

    def cmp(self):
        value = self.unary()
        token = self.peek()
        if token in (("op", "=="), ("op", "!=")):
            self.take()
            right = self.unary()
            same = _loose(value) == _loose(right)
            return same if token[1] == "==" else not same
        return value

    def unary(self):
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.primary()

    def primary(self):
        kind, value = self.take()
        if kind == "str":
            return value[1:-1].replace("''", "'")
        if kind == "num":
            return float(value)
        if (kind, value) == ("op", "("):
            inner = self.or_()
            self.take(")")
            return inner
        if kind != "name":
            raise WorkflowError(f"expression {self.text!r}: unexpected {value!r}")
        if value in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[value]
        if self.peek() == ("op", "("):
            self.take()
            args = []
            while self.peek() != ("op", ")"):
                args.append(self.or_())
                if self.peek() == ("op", ","):
                    self.take()
            self.take(")")
            return self.scope.call(value, args)
        current = self.scope.context(value)
        while self.peek() == ("op", "."):
            self.take()
            _, name = self.take()
            current = current.get(name) if isinstance(current, dict) else None
        return current


def truthy(value) -> bool:
    return value not in (None, False, 0, 0.0, "")


def _loose(value):
    # GitHub compares strings case-insensitively and null as ''.
    return "" if value is None else value.lower() if isinstance(value, str) else value


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)


@dataclass
class Scope:
    contexts: dict[str, Any]
    status: str = "success"                  # of the job (or composite action) so far

    def context(self, name: str):
        if name not in self.contexts:
            raise WorkflowError(f"no context {name!r} here (have {', '.join(self.contexts)})")
        return self.contexts[name]

    def call(self, name: str, args: list):
        if name == "fromJSON":
            return json.loads(args[0])
        if name == "always":
            return True
        if name == "cancelled":
            return False
        if name == "success":
            return self.status == "success"
        if name == "failure":
            return self.status == "failure"
        raise WorkflowError(f"no stand-in for the expression function {name}()")

    def evaluate(self, expression: str):
        return _Parser(expression, self).parse()

    def substitute(self, value):
        """A value with ${{ }} expressions replaced (one whole expression keeps its type)."""
        if isinstance(value, dict):
            return {k: self.substitute(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.substitute(v) for v in value]
        if not isinstance(value, str):
            return value
        whole = _EXPRESSION.fullmatch(value.strip())
        if whole:
            return self.evaluate(whole.group(1))
        return _EXPRESSION.sub(lambda m: _text(self.evaluate(m.group(1))), value)

    def condition(self, text) -> bool:
        if text is None:
            return self.status == "success"
        if isinstance(text, bool):
            return text
        expression = str(text).strip()
        whole = _EXPRESSION.fullmatch(expression)
        if whole:
            expression = whole.group(1)
        if not re.search(r"\b(always|cancelled|success|failure)\s*\(", expression):
            expression = f"success() && ({expression})"
        return truthy(self.evaluate(expression))


# -- the runner --------------------------------------------------------------------------

def _pattern(text: str) -> re.Pattern:
    """An @actions/glob pattern (absolute) as a regular expression over paths."""
    out = []
    i = 0
    while i < len(text):
        if text.startswith("**", i):
            out.append(".*")
            i += 2
        elif text[i] == "*":
            out.append("[^/]*")
            i += 1
        elif text[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(text[i]))
            i += 1
    return re.compile("".join(out) + "(/.*)?")


def _search_path(pattern: str) -> Path:
    parts = Path(pattern).parts
    for index, part in enumerate(parts):
        if any(c in part for c in "*?["):
            return Path(*parts[:index])
    return Path(pattern)


def _read_commands_file(path: Path) -> dict[str, str]:
    """NAME=value lines and NAME<<DELIMITER blocks of GITHUB_OUTPUT / GITHUB_ENV."""
    values: dict[str, str] = {}
    if not path.is_file():
        return values
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            i += 1
            while lines[i] != delimiter:
                block.append(lines[i])
                i += 1
            values[name] = "\n".join(block)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        elif line.strip():
            raise WorkflowError(f"{path.name}: cannot read {line!r}")
        i += 1
    return values


@dataclass
class StepLog:
    name: str
    outcome: str
    output: str = ""
    seconds: float = 0.0


@dataclass
class JobRun:
    job: str
    name: str
    matrix: dict
    runs_on: Any
    container: Any
    result: str = "success"
    outputs: dict[str, str] = field(default_factory=dict)
    steps: list[StepLog] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    post: list[tuple] = field(default_factory=list)       # (action, ...) run when the job ends
    seconds: float = 0.0

    def log(self) -> str:
        return "\n".join(f"--- {s.name}: {s.outcome} ({s.seconds:.1f} s)\n{s.output}" for s in self.steps)

    def step(self, name_part: str) -> StepLog:
        found = [s for s in self.steps if name_part in s.name]
        assert len(found) == 1, (name_part, [s.name for s in self.steps])
        return found[0]


class Runner:
    def __init__(self, repo: Path, home: Path, checkout_files: list[str]):
        self.repo = repo
        self.home = home
        self.workspace = home / "work" / "spillway" / "spillway"
        self.tool_cache = home / "tool-cache"
        self.artifacts = home / "artifact-store"
        self.caches = home / "cache-store"
        self.files = checkout_files
        for folder in (self.tool_cache, self.artifacts, self.caches):
            folder.mkdir(parents=True, exist_ok=True)
        self.base_env = {k: v for k, v in os.environ.items()
                         if k != "PYTHONPATH" and not k.startswith(("GITHUB_", "RUNNER_"))}

    # -- stand-ins --------------------------------------------------------------------------

    def checkout(self) -> None:
        for relative in self.files:
            source = self.repo / relative
            if not source.is_file():
                continue                      # deleted in the work tree
            target = self.workspace / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)

    def _upload(self, inputs: dict) -> str:
        name = inputs["name"]
        lines = [line.strip() for line in str(inputs["path"]).splitlines() if line.strip()]
        includes = [str(self.workspace / line) for line in lines if not line.startswith("!")]
        excludes = [_pattern(str(self.workspace / line[1:])) for line in lines if line.startswith("!")]
        searches = [_search_path(p) for p in includes]
        files: set[Path] = set()
        for include in includes:
            regex = _pattern(include.rstrip("/"))
            base = _search_path(include)
            candidates = [base] if base.is_file() else (p for p in base.rglob("*") if p.is_file())
            files.update(p for p in candidates if regex.fullmatch(str(p)))
        files = {p for p in files if not any(x.fullmatch(str(p)) for x in excludes)}
        if not files:
            if inputs.get("if-no-files-found", "warn") == "error":
                raise WorkflowError(f"upload-artifact {name}: no files")
            return f"upload-artifact {name}: no files found; nothing uploaded"
        common = Path(os.path.commonpath([str(s) for s in searches]))
        root = common if common.is_dir() else common.parent
        target = self.artifacts / name
        if target.exists():
            raise WorkflowError(f"upload-artifact: an artifact named {name} exists already (v4 refuses it)")
        for path in sorted(files):
            destination = target / path.relative_to(root)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)
        return f"upload-artifact {name}: {len(files)} files from {root}"

    def _download(self, inputs: dict) -> str:
        into = self.workspace / inputs.get("path", ".")
        names = sorted(p.name for p in self.artifacts.iterdir())
        if "name" in inputs:
            names = [n for n in names if n == inputs["name"]]
        elif "pattern" in inputs:
            names = [n for n in names if fnmatch.fnmatchcase(n, inputs["pattern"])]
        merge = str(inputs.get("merge-multiple", "false")).lower() == "true"
        for name in names:
            shutil.copytree(self.artifacts / name, into if merge else into / name, dirs_exist_ok=True)
        return f"download-artifact: {', '.join(names)} into {into}"

    def _cache_restore(self, inputs: dict, job: JobRun) -> str:
        key = inputs["key"]
        prefixes = [line.strip() for line in str(inputs.get("restore-keys", "")).splitlines() if line.strip()]
        saved = sorted(self.caches.iterdir(), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        hit = next((p for p in saved if p.name == key), None)
        if hit is None:
            hit = next((p for prefix in prefixes for p in saved if p.name.startswith(prefix)), None)
        paths = [line.strip() for line in str(inputs["path"]).splitlines() if line.strip()]
        job.post.append(("cache", key, paths, hit is not None and hit.name == key))
        if hit is None:
            return f"cache: no cache for {key}"
        for index, path in enumerate(paths):
            if (hit / str(index)).is_dir():
                shutil.copytree(hit / str(index), self.workspace / path, dirs_exist_ok=True)
        return f"cache: restored {hit.name}"

    def save_cache(self, key: str, paths: list[str]) -> None:
        target = self.caches / key
        for index, path in enumerate(paths):
            if (self.workspace / path).is_dir():
                shutil.copytree(self.workspace / path, target / str(index), dirs_exist_ok=True)

    # -- steps ------------------------------------------------------------------------------

    def _run_script(self, script: str, shell: str | None, env: dict[str, str], state: dict,
                    scope: Scope, workdir: str | None) -> tuple[int, str]:
        temp = Path(env["RUNNER_TEMP"])
        state["count"] += 1
        files = {name: temp / f"_{name.lower()}_{state['count']}" for name in
                 ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY")}
        for path in files.values():
            path.write_text("")
        script_file = temp / f"_step_{state['count']}.sh"
        script_file.write_text(script)
        command = (["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)] if shell == "bash"
                   else ["bash", "-e", str(script_file)] if shell is None
                   else None)
        if command is None:
            raise WorkflowError(f"no stand-in for shell {shell!r}")
        process_env = dict(env, **state["env"], **{k: str(v) for k, v in files.items()})
        process_env["PATH"] = ":".join([*reversed(state["path"]), process_env["PATH"]])
        result = subprocess.run(command, env=process_env, cwd=self.workspace / (workdir or "."),
                                capture_output=True, text=True)
        state["env"].update(_read_commands_file(files["GITHUB_ENV"]))
        state["path"] += [line for line in files["GITHUB_PATH"].read_text().splitlines() if line]
        state["outputs"] = _read_commands_file(files["GITHUB_OUTPUT"])
        summary = files["GITHUB_STEP_SUMMARY"].read_text()
        if summary:
            state["summaries"].append(summary)
        return result.returncode, result.stdout + result.stderr

    def _steps(self, steps: list[dict], scope: Scope, env: dict[str, str], state: dict, job: JobRun,
               prefix: str = "") -> str:
        """Run steps; returns the status they end with ("success" or "failure")."""
        step_outputs: dict[str, dict] = {}
        scope.contexts["steps"] = step_outputs
        for number, step in enumerate(steps):
            label = prefix + str(step.get("name") or step.get("uses") or step.get("run", "").split("\n")[0])
            if not scope.condition(step.get("if")):
                job.steps.append(StepLog(label, "skipped"))
                continue
            started = time.monotonic()
            step_env = dict(env, **{k: _text(v) for k, v in scope.substitute(step.get("env", {})).items()})
            outputs: dict[str, str] = {}
            if "run" in step:
                code, text = self._run_script(scope.substitute(step["run"]), step.get("shell"), step_env, state,
                                              scope, step.get("working-directory"))
                outputs = state.pop("outputs", {})
            else:
                code, text, outputs = self._uses(step, scope, step_env, state, job, label)
            outcome = "success" if code == 0 else "failure"
            job.steps.append(StepLog(label, outcome, text, time.monotonic() - started))
            if "id" in step:
                step_outputs[step["id"]] = {"outputs": outputs, "outcome": outcome, "conclusion": outcome}
            if outcome == "failure" and not step.get("continue-on-error"):
                scope.status = "failure"
        return scope.status

    def _uses(self, step: dict, scope: Scope, env: dict[str, str], state: dict, job: JobRun,
              label: str) -> tuple[int, str, dict]:
        uses = step["uses"]
        inputs = {k: _text(v) for k, v in scope.substitute(step.get("with", {})).items()}
        action = uses.split("@")[0]
        if action == "actions/checkout":
            self.checkout()
            return 0, "checkout: the repository's files", {}
        if action == "actions/upload-artifact":
            return 0, self._upload(inputs), {}
        if action == "actions/download-artifact":
            return 0, self._download(inputs), {}
        if action == "actions/cache":
            return 0, self._cache_restore(inputs, job), {}
        if uses.startswith("./"):
            return self._composite(self.workspace / uses, inputs, scope, env, state, job, label)
        raise WorkflowError(f"no stand-in for uses: {uses}")

    def _composite(self, path: Path, given: dict, outer: Scope, env: dict[str, str], state: dict, job: JobRun,
                   label: str) -> tuple[int, str, dict]:
        definition = yaml.safe_load((path / "action.yml").read_text())
        if definition["runs"]["using"] != "composite":
            raise WorkflowError(f"{path}: not a composite action")
        unknown = set(given) - set(definition.get("inputs", {}))
        if unknown:
            raise WorkflowError(f"{path}/action.yml has no input {', '.join(sorted(unknown))}")
        inputs = {name: given.get(name, _text(spec.get("default", "")))
                  for name, spec in definition.get("inputs", {}).items()}
        github = dict(outer.contexts["github"], action_path=str(path))
        scope = Scope({"inputs": inputs, "github": github, "runner": outer.contexts["runner"],
                       "env": outer.contexts["env"]})
        action_env = dict(env, GITHUB_ACTION_PATH=str(path))
        status = self._steps(definition["runs"]["steps"], scope, action_env, state, job, prefix=f"{label} > ")
        outputs = {name: _text(scope.substitute(spec["value"]))
                   for name, spec in definition.get("outputs", {}).items()}
        return (0 if status == "success" else 1), "", outputs

    # -- jobs -------------------------------------------------------------------------------

    def run_workflow(self, path: Path) -> dict[str, list[JobRun]]:
        workflow = yaml.safe_load(path.read_text())
        jobs: dict[str, dict] = workflow["jobs"]
        done: dict[str, list[JobRun]] = {}
        while len(done) < len(jobs):
            ready = [name for name, job in jobs.items() if name not in done
                     and all(n in done for n in _needs(job))]
            if not ready:
                raise WorkflowError("the jobs' needs form a cycle")
            name = ready[0]
            done[name] = self._job(name, jobs[name], workflow.get("env", {}), done)
        return done

    def _job(self, name: str, job: dict, workflow_env: dict, done: dict[str, list[JobRun]]) -> list[JobRun]:
        needs = {n: {"result": _combined(done[n]), "outputs": dict(done[n][0].outputs) if done[n] else {}}
                 for n in _needs(job)}
        base = {"github": {"sha": FAKE_SHA, "workspace": str(self.workspace), "event_name": "pull_request"},
                "needs": needs, "runner": {"temp": "", "tool_cache": str(self.tool_cache), "os": "Linux"},
                "env": {}}
        status = "success" if all(n["result"] == "success" for n in needs.values()) else "failure"
        if not Scope(dict(base), status).condition(job.get("if")):
            return []
        strategy = Scope(dict(base)).substitute(job.get("strategy", {}).get("matrix"))
        if strategy is None:
            entries: list[dict] = [{}]
        else:
            if set(strategy) != {"include"}:
                raise WorkflowError(f"job {name}: only matrix include lists have a stand-in")
            entries = strategy["include"]
        return [self._one_job(name, job, workflow_env, dict(base, matrix=entry), entry) for entry in entries]

    def _one_job(self, name: str, job: dict, workflow_env: dict, contexts: dict, entry: dict) -> JobRun:
        scope = Scope(contexts)
        run = JobRun(name, _text(scope.substitute(job.get("name", name))), entry, scope.substitute(job["runs-on"]),
                     scope.substitute(job.get("container")))
        shutil.rmtree(self.workspace, ignore_errors=True)
        self.workspace.mkdir(parents=True)
        temp = self.home / "temp"
        shutil.rmtree(temp, ignore_errors=True)
        temp.mkdir()
        contexts["runner"] = dict(contexts["runner"], temp=str(temp))
        env = dict(self.base_env, CI="true", GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(self.workspace),
                   GITHUB_SHA=FAKE_SHA, RUNNER_TEMP=str(temp), RUNNER_TOOL_CACHE=str(self.tool_cache),
                   HOME=str(self.home / "home"))
        (self.home / "home").mkdir(exist_ok=True)
        env.update({k: _text(v) for k, v in scope.substitute({**workflow_env, **job.get("env", {})}).items()})
        contexts["env"] = {}
        state: dict = {"count": 0, "env": {}, "path": [], "summaries": run.summaries}
        started = time.monotonic()
        run.result = self._steps(job["steps"], scope, env, state, run)
        run.seconds = time.monotonic() - started
        for kind, key, paths, exact in run.post:
            if kind == "cache" and run.result == "success" and not exact:
                self.save_cache(key, paths)
        run.outputs = {k: _text(scope.substitute(v)) for k, v in job.get("outputs", {}).items()}
        return run


def _needs(job: dict) -> list[str]:
    needs = job.get("needs", [])
    return [needs] if isinstance(needs, str) else list(needs)


def _combined(runs: list[JobRun]) -> str:
    if not runs:
        return "skipped"
    return "success" if all(r.result == "success" for r in runs) else "failure"


_NOT_CHECKED_OUT = {".git", "build", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".cache"}


def checkout_files(repo: Path) -> list[str]:
    """The files actions/checkout would give: tracked ones, and new ones not
    ignored (the work tree's); outside a git checkout (an sdist, the Nix
    store), every file but build outputs and caches."""
    if (repo / ".git").exists():
        listed = subprocess.run(["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], capture_output=True, check=True).stdout
        return sorted({name for name in listed.decode().split("\0") if name})
    return sorted(str(p.relative_to(repo)) for p in repo.rglob("*")
                  if p.is_file() and not _NOT_CHECKED_OUT & set(p.relative_to(repo).parts))
