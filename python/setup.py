"""Builds podcheck._podcheck with the project's CMake for `pip install ./python` (pyproject.toml has the rest).

The build tree is <repo>/build-pip (kept between installs); CMake finds the interpreter pip runs under.
PODCHECK_CMAKE_ARGS adds configure arguments (e.g. -Dpybind11_DIR=...), PODCHECK_BUILD_JOBS sets the jobs.
"""

import os
import pathlib
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

REPO = pathlib.Path(__file__).resolve().parent.parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = REPO / "build-pip"
        configure = ["cmake", "-S", str(REPO), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     "-DPODCHECK_BUILD_TESTS=OFF", "-DPODCHECK_ENABLE_CUDA=OFF", f"-DPython_EXECUTABLE={sys.executable}",
                     *shlex.split(os.environ.get("PODCHECK_CMAKE_ARGS", ""))]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"] if not (build / "CMakeCache.txt").exists() else []
        subprocess.run(configure, check=True)
        jobs = os.environ.get("PODCHECK_BUILD_JOBS", str(os.cpu_count() or 2))
        subprocess.run(["cmake", "--build", str(build), "--target", "podcheck_python", "-j", jobs], check=True)
        built = next((build / "python" / "podcheck").glob("_podcheck*.so"))
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)


setup(ext_modules=[Extension("podcheck._podcheck", sources=[])], cmdclass={"build_ext": CMakeBuild})
