"""A real model in the window: File ▸ Open model…, the loading worker, the model selection
and the model docks (`controller`)."""
