"""Work off the UI thread: `base` (WorkerThread, Worker: one latest-wins thread; its Qt-free
core in `jobs`), `compute` (the frame) and `steps` (the step-throughs' results). A result
carries the request it answers, so a stale one is dropped."""
