"""Dependency-free pictures: heatmaps and line plots, as terminal text or as SVG.

Generic drawing, knowing nothing of attention or models: ``heatmap_text``/``heatmap_svg`` draw
a (T, S) matrix of values in [0, 1] on a fixed scale with row and column labels;
``line_plot_text``/``line_plot_svg`` draw named series ``{name: (xs, ys)}``;
``grid_svg``/``side_by_side`` put several pictures together (one per attention head).
``minigrad.draw.console`` is where they print to: any output encoding (ASCII stand-ins for
░ ┌ ≤ …) and a pipe that closes early (``| head``) end a program quietly.
"""
from minigrad.draw.svg import grid_svg, heatmap_svg, line_plot_svg
from minigrad.draw.terminal import heatmap_text, line_plot_text, side_by_side

__all__ = ["grid_svg", "heatmap_svg", "heatmap_text", "line_plot_svg", "line_plot_text",
           "side_by_side"]
