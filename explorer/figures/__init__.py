"""Drawing blocks on pyqtgraph's public API, shared by every panel; no panel logic here.

    themes      colours, fonts and line widths of a figure (screen dark/light, slides)
    plots       plot styling, titles, stable ranges, bar charts
    heatmap     one matrix with token axes, selection marker and linked crosshair
    thumbnails  every head's matrix in one view (the heads panel)
    tiles       a strip of labelled matrices in one view (the qkv panel)

A panel (explorer.panels) builds these from (frame, selection, theme, size);
the window and every export go through the same code.
"""
