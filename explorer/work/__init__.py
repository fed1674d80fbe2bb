"""Work off the UI thread: the frame computation (`compute`) and the step-throughs' results
(`steps`). A result carries the request it answers, so a stale one is dropped."""
