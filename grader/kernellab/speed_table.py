"""A grade's timed speed cases for its feedback: the table of times and GB/s (the student's kernel,
the reference, the baseline and a copy kernel) and its bar chart."""

import base64
import io

from kernellab.grading.model import Grade


def size_name(size: int) -> str:
    """2^28 for powers of two, the number otherwise."""
    return f"2^{size.bit_length() - 1}" if size & (size - 1) == 0 else str(size)


def speed_table(grade: Grade) -> list[tuple[str, str, str, float, float]]:
    """(case, size, kernel, microseconds, GB/s) for the student, the reference and the copy kernel."""
    rows = []
    for task in grade.tasks:
        for result in task.speed:
            for kernel, micros, moved in (("yours", result.student_us, result.bytes),
                                          ("reference", result.reference_us, result.bytes),
                                          (result.baseline or "baseline", result.baseline_us, result.bytes),
                                          ("copy kernel, same size", result.copy_us, 8.0 * result.size)):
                if micros:
                    rows.append((result.case, size_name(result.size), kernel, micros, moved / (micros * 1e3)))
    return rows


def score_tables(grade: Grade) -> list[str]:
    """Per timed case, the score table of CS149's checker.py as Markdown lines: each size with the
    reference's time, the student's and the points it gave, then the total. A size where the
    student's time could not count ("no speed points") is marked (F), as the course marks it."""
    lines: list[str] = []
    for task in grade.tasks:
        cases = dict.fromkeys(result.case for result in task.speed)
        for case in cases:
            results = [result for result in task.speed if result.case == case]
            if not any(result.student_us for result in results):
                continue
            lines += ["", f"{case} score table:", "", "| element count | ref time (ms) | your time (ms) | score |",
                      "|---|---|---|---|"]
            for result in results:
                yours = f"{result.student_us / 1e3:.3f}" if result.student_us else "-"
                reference = f"{result.reference_us / 1e3:.3f}" if result.reference_us else "-"
                failed = " (F)" if result.problem else ""
                lines.append(f"| {result.size} | {reference} | {yours}{failed} | {result.points:g} |")
            total = sum(result.points for result in results)
            possible = sum(result.max_points for result in results)
            lines.append(f"| | | total score: | {total:g}/{possible:g} |")
    return lines


def speed_chart(grade: Grade) -> str:
    """A bar chart of the speed table's GB/s as a PNG data URI, or '' when nothing was timed."""
    rows = speed_table(grade)
    if not rows:
        return ""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    labels = [f"{case}\n{size}" for case, size, _kernel, _micros, _gbps in rows if _kernel == "yours"]
    kernels = tuple(dict.fromkeys(kernel for _case, _size, kernel, _micros, _gbps in rows))
    figure, axes = pyplot.subplots(figsize=(max(6, 1.8 * len(labels)), 3.6))
    width = 0.8 / len(kernels)
    for offset, kernel in enumerate(kernels):
        values = [gbps for _case, _size, name, _micros, gbps in rows if name == kernel]
        axes.bar([index + offset * width for index in range(len(values))], values, width, label=kernel)
    axes.set_xticks([index + width * (len(kernels) - 1) / 2 for index in range(len(labels))], labels, fontsize=8)
    axes.set_ylabel("GB/s (bytes read + written)")
    axes.legend(fontsize=8)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    pyplot.close(figure)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
