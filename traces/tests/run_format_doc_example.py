#!/usr/bin/env python3
"""Run the h5py example of docs/FORMAT.md ("Writing a trace with h5py alone") as documented, with small
inputs, so the documentation itself is tested: the C++ test then reads the file it wrote.

usage: run_format_doc_example.py SOURCE_DIR OUT.h5
"""
import os
import re
import sys

import numpy as np

src, out = sys.argv[1], sys.argv[2]
doc = open(os.path.join(src, "docs", "FORMAT.md"), encoding="utf-8").read()
section = doc.split("## Writing a trace with h5py alone", 1)[1]
code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
code = code.replace('"my_trace.h5"', repr(out))
rng = np.random.default_rng(1)
env = dict(q=rng.standard_normal((6, 4, 8)), k=rng.standard_normal((9, 2, 8)), v=rng.standard_normal((9, 2, 8)),
           out=rng.standard_normal((6, 4, 8)), lse=rng.standard_normal((6, 4)))
exec(compile(code, "docs/FORMAT.md", "exec"), env)
