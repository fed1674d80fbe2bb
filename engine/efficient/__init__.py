"""The seed's ways out of O(n²) (DESIGN.md, "Efficient attention"), Qt-free.

    features.py    φ of the linear kernels: elu + 1 ("linear"), FAVOR+ random features
                   ("performer", its matrix drawn from the seed)
    summaries.py   hierarchical attention's block summaries (mean keys, mean values)
    formula.py     each variant's softmax input over the original keys, for the eager formula:
                   softmax of it is the variant's (implicit) attention matrix, exactly
    linear.py      linear kernels by associativity: chunked prefix sums, O(S·F·Dh)
    blocks.py      local ∪ global and hierarchical attention, a block of query rows at a time
    attend.py      what engine.run calls: the variant's context, no (S, Skv) grid
    report.py      approximation_report: the variant against full attention on the same layer
    costs.py       FLOPs and peak bytes of each variant and of full attention

This package's ``__init__`` imports nothing, so the eager formula (engine.backends.eager) can
import :mod:`.formula` while :mod:`.attend` imports the backends' call without a cycle.
"""
