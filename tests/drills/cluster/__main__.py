"""``scripts/drill [--quick]``: the cluster drill (see the package docs); exits 0 only when nothing
was lost, duplicated, overdrawn or badly signed. The last line is the one-line summary."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import traceback
from pathlib import Path
from types import FrameType

from tests.drills.cluster.drill import Report, log, run
from tests.drills.cluster.plan import FULL, QUICK


def table(report: Report) -> str:
    lines = [f"{'phase':16} {'requests':>8} {'5xx':>5} {'recover_s':>10} {'answer_s':>9}  measure / note"]
    faulted = {r.name.split()[0]: r for r in report.recoveries}
    for phase, (requests, fivexx) in report.phases().items():
        recovery = faulted.get(phase.split("-")[0])
        if recovery is None:
            lines.append(f"{phase:16} {requests:>8} {fivexx:>5} {'':>10} {'':>9}")
            continue
        seconds = "never" if recovery.recover_s is None else f"{recovery.recover_s:.1f}"
        answer = "never" if recovery.answer_s is None else f"{recovery.answer_s:.1f}"
        note = f"{recovery.measure}" + (f"; {recovery.note}" if recovery.note else "")
        lines.append(f"{phase:16} {requests:>8} {fivexx:>5} {seconds:>10} {answer:>9}  {note}")
    totals = report.totals
    if report.load is not None and not totals.requests:  # (the drill stopped before its count)
        totals.requests = len(report.load.answers)
        totals.fivexx = sum(1 for a in report.load.answers if a.status >= 500)
    lines.append(f"{'total':16} {totals.requests:>8} {totals.fivexx:>5}")
    reasons = report.reasons()
    if reasons:
        lines.append("5xx and unanswered, by phase, status and reason:")
        for (phase, status, why), n in sorted(reasons.items()):
            lines.append(f"  {phase:16} {status:>3} {why or '-':32} {n}")
    lines += [f"- {note}" for note in totals.notes]
    lines.append(f"exit codes at the stop: {report.exit_codes}")
    lines.append("timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in report.timings.items()))
    return "\n".join(lines)


def interrupted(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum} (the drill's parent is pid {os.getppid()})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/drill", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the short drill (under 4 minutes)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs) after the drill")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("the cluster drill runs nginx and PostgreSQL as their users: run it as root", file=sys.stderr)
        return 2
    plan = QUICK if args.quick else FULL
    signal.signal(signal.SIGTERM, interrupted)
    root = Path(tempfile.mkdtemp(prefix="cluster-drill-"))
    report = Report(plan)
    failed = False
    try:
        run(plan, root, report)
    except BaseException as exc:  # a fault of the drill itself, or Ctrl-C: everything is stopped by now
        failed = True
        traceback.print_exc()
        if isinstance(exc, KeyboardInterrupt):
            log("interrupted")
    clean = not failed and report.totals.clean
    print(table(report))
    if not clean and report.cluster is not None:
        for proc in report.cluster.processes():
            print(f"--- {proc.name}: {proc.log} (tail) ---\n{proc.tail()}")
        print(f"logs kept in {root}")
    elif not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    print(report.totals.line() if not failed else report.totals.line() + " (the drill did not finish)")
    return 0 if clean else 1


if __name__ == "__main__":
    raise SystemExit(main())
