#!/usr/bin/env python3
"""Converts a FlashInfer API-logging dump written in torch.save format (FLASHINFER_LOGLEVEL=10 without
FLASHINFER_DUMP_SAFETENSORS=1: inputs.pt / outputs.pt) into the safetensors format podcheck reads.

  pt_to_safetensors.py SRC_DUMP_DIR DST_DUMP_DIR

Copies the dump to DST (which must not exist) and, in every call folder and graph_flushes/flush_* snapshot,
replaces inputs.pt / outputs.pt by inputs.safetensors / outputs.safetensors holding the same tensors
(contiguous, the bytes unchanged) and sets "tensor_format": "safetensors" in metadata.jsonl and session.jsonl.
Needs torch and safetensors (pip install safetensors). The .pt files are loaded with weights_only=True:
they hold plain dicts of tensors, which is what FlashInfer writes.
"""
import json
import os
import shutil
import sys


def convert_jsonl(path):
    if not os.path.exists(path):
        return
    lines = []
    with open(path) as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                if rec.get("tensor_format") == "torch":
                    rec["tensor_format"] = "safetensors"
                lines.append(json.dumps(rec))
    with open(path, "w") as f:
        f.write("".join(line + "\n" for line in lines))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    if os.path.exists(dst):
        sys.exit(f"pt_to_safetensors: '{dst}' exists")
    import torch
    from safetensors.torch import save_file

    shutil.copytree(src, dst)
    n = 0
    for folder, _, files in os.walk(dst):
        for kind in ("inputs", "outputs"):
            pt = os.path.join(folder, kind + ".pt")
            if kind + ".pt" not in files:
                continue
            tensors = torch.load(pt, map_location="cpu", weights_only=True)
            if not isinstance(tensors, dict) or not all(torch.is_tensor(t) for t in tensors.values()):
                sys.exit(f"pt_to_safetensors: {pt} is not a dict of tensors")
            save_file({k: t.contiguous() for k, t in tensors.items()}, os.path.join(folder, kind + ".safetensors"))
            os.remove(pt)
            n += 1
        if "metadata.jsonl" in files:
            convert_jsonl(os.path.join(folder, "metadata.jsonl"))
    convert_jsonl(os.path.join(dst, "session.jsonl"))
    print(f"pt_to_safetensors: {n} file(s) converted into {dst}")


if __name__ == "__main__":
    main()
