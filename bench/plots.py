"""gnuplot plots for bench/report.py: each series goes to a data file in a
scratch folder, and one PNG is drawn per plot (pngcairo). A missing or
failing gnuplot leaves the plot out (None), never the report.
"""
import os
import subprocess
import sys


def series_file(pdir, name, rows):
    path = os.path.abspath(os.path.join(pdir, name + ".dat"))
    with open(path, "w") as f:
        f.writelines(" ".join(f"{v:.9g}" for v in r) + "\n" for r in rows)
    return path


def gnuplot(script, datdir):
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True, cwd=datdir)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"report.py: gnuplot failed: {e}", file=sys.stderr)
        return False
    return True


def plot(pdir, datdir, name, title, xlabel, ylabel, series, logx=True, logy=True, extra=""):
    """series: [(label, rows, style)]; empty series are left out."""
    parts = []
    for label, rows, style in series:
        if rows:
            f = series_file(datdir, f"{name}-{len(parts)}", rows)
            parts.append(f"'{f}' using 1:2 {style} title '{label}'")
    if not parts:
        return None
    out = os.path.abspath(os.path.join(pdir, name + ".png"))
    script = f"""set terminal pngcairo size 1000,560 font 'sans,11'
set output '{out}'
set title '{title}'
set xlabel '{xlabel}'
set ylabel '{ylabel}'
set key outside right top box
set format y '%g'
set grid
{'set logscale x' if logx else ''}
{'set logscale y' if logy else ''}
{extra}
plot {', '.join(parts)}
"""
    return os.path.basename(out) if gnuplot(script, datdir) else None
