"""A real model in the window: `controller` (ModelController, install_model_support), `worker`
(its thread), `source` (the demo model, resolving a source), `dialog` (File ▸ Open model…),
`status` (the loading indicator), `actions` (the menu entries and the model docks)."""
