"""Drawing blocks on pyqtgraph's public API, shared by every panel; no panel logic here.

    themes      colours, fonts and line widths of a figure (screen dark/light, slides)
    plots       plot styling, titles, stable ranges, bar charts, lean axes and views
    text        rich-text titles and labels (RunsLabel, TileLabel, titled): their layout
    heatmap     one matrix with token axes, selection marker and linked crosshair
    matrix_grid many matrices as tiles of one image in one view, hover and click per cell
    thumbnails  every head's matrix in one view (the heads panel), on matrix_grid
    tiles       a strip of labelled matrices in one view (the qkv panel), on matrix_grid
    mosaic      every layer × head of a real model as framed thumbnails (model_grid), on matrix_grid
    cards       titled boxes of plain-text rows (the diagnostics panel's numerics, costs, backends)

A panel (explorer.panels) builds these from (frame, selection, theme, size);
the window and every export go through the same code.
"""
