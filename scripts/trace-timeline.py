#!/usr/bin/env python3
"""Draws a streamrt trace (TILEDFLOW_TRACE=file.json) as an SVG timeline: one lane per thread,
one box per task, coloured by its stream, for the first graph in the file.

    python3 scripts/trace-timeline.py trace.json "title" [SPAN_MS] > timeline.svg

SPAN_MS, where given, is the time the width stands for (the same for timelines to compare).

The trace itself opens in https://ui.perfetto.dev; this is for documents."""
import json
import sys

COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"]


def main():
    path, title = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]
    events = json.load(open(path))["traceEvents"]
    graph = next(e for e in events if e.get("cat") == "graph")
    t0, t1 = graph["ts"], graph["ts"] + graph["dur"]
    tasks = [e for e in events if e.get("cat") == "task" and t0 <= e["ts"] <= t1]
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    lanes = sorted(names)
    streams = sorted({e["name"] for e in tasks})
    width, left, lane_h, top = 900, 190, 28, 30
    span = float(sys.argv[3]) * 1e3 if len(sys.argv) > 3 else t1 - t0
    scale = (width - left - 10) / span
    height = top + lane_h * len(lanes) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="18" text-anchor="middle">{title}</text>']
    for row, tid in enumerate(lanes):
        y = top + row * lane_h
        busy = sum(e["dur"] for e in tasks if e["tid"] == tid)
        out.append(f'<text x="4" y="{y + 17}">{names[tid]} ({busy / 1e3:.2f} ms busy)</text>')
        out.append(f'<rect x="{left}" y="{y + 2}" width="{(t1 - t0) * scale:.2f}" height="{lane_h - 4}" '
                   f'fill="#eeeeee"/>')
        for e in tasks:
            if e["tid"] == tid:
                x = left + (e["ts"] - t0) * scale
                w = max(e["dur"] * scale, 0.5)
                c = COLOURS[streams.index(e["name"]) % len(COLOURS)]
                out.append(f'<rect x="{x:.2f}" y="{y + 2}" width="{w:.2f}" height="{lane_h - 4}" fill="{c}"/>')
    y = top + lane_h * len(lanes) + 18
    out.append(f'<text x="{left}" y="{y}">0</text>')
    out.append(f'<text x="{width - 10}" y="{y}" text-anchor="end">{span / 1e3:.2f} ms</text>')
    out.append(f'<line x1="{left + (t1 - t0) * scale:.2f}" y1="{top}" x2="{left + (t1 - t0) * scale:.2f}" '
               f'y2="{top + lane_h * len(lanes)}" stroke="black"/>')
    out.append(f'<text x="{left + (t1 - t0) * scale + 4:.2f}" y="{top + 12}">graph: {(t1 - t0) / 1e3:.2f} ms</text>')
    legend = ", ".join(f"{s}" for s in streams)
    out.append(f'<text x="{width / 2}" y="{y}" text-anchor="middle">streams: {legend}</text>')
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
