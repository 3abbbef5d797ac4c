"""Builds ropekit's extension with CMake (pyproject.toml has the metadata): configure this checkout with the
interpreter that runs pip, build the extension, the command line and the Ceres module, and copy them into the
package. No network. Portable: no -march=native (the run-time SIMD dispatch picks the vector path of the CPU that
runs it), and every build file outside the source tree (a temporary directory), so a checkout's own build/ is
never touched."""

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext
from setuptools.command.egg_info import egg_info

ROOT = os.path.dirname(os.path.abspath(__file__))
# One scratch directory per checkout (a rebuild reuses its CMake tree), outside it.
SCRATCH = os.path.join(tempfile.gettempdir(), "ropekit-pip-" + hashlib.sha256(ROOT.encode()).hexdigest()[:12])


class OutOfTreeBuild(build):
    def initialize_options(self):
        super().initialize_options()
        self.build_base = os.path.join(SCRATCH, "setuptools")


class OutOfTreeEggInfo(egg_info):
    def initialize_options(self):
        super().initialize_options()
        os.makedirs(SCRATCH, exist_ok=True)
        self.egg_base = os.path.relpath(SCRATCH, ROOT)  # setuptools wants it relative to the project


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        cmake_dir = os.path.join(SCRATCH, "cmake")
        args = ["-DCMAKE_BUILD_TYPE=Release", "-DROPEKIT_TESTS=OFF", "-DROPEKIT_PYTHON=ON", "-DROPEKIT_NATIVE=OFF",
                f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ccache"):
            args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        subprocess.run(["cmake", "-S", ROOT, "-B", cmake_dir, *args], check=True, stdout=subprocess.DEVNULL)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.run(["cmake", "--build", cmake_dir, "--target", "_ropekit", "ropekit_ceres", "ropekit", "-j", jobs],
                       check=True)
        built = os.path.join(cmake_dir, "python", "ropekit", "_ropekit" + sysconfig.get_config_var("EXT_SUFFIX"))
        target = self.get_ext_fullpath(ext.name)
        package = os.path.dirname(target)
        os.makedirs(package, exist_ok=True)
        shutil.copy2(built, target)
        # The Ceres module, loaded on first use of fit_params / fit_spectrum from the extension's directory.
        shutil.copy2(os.path.join(cmake_dir, "libropekit_ceres.so"), package)
        # The command line for the `ropekit` console script (ropekit/_command.py), its Ceres module beside it.
        bin_dir = os.path.join(package, "_bin")
        os.makedirs(bin_dir, exist_ok=True)
        shutil.copy2(os.path.join(cmake_dir, "ropekit"), bin_dir)
        shutil.copy2(os.path.join(cmake_dir, "libropekit_ceres.so"), bin_dir)


setup(ext_modules=[Extension("ropekit._ropekit", sources=[])],
      cmdclass={"build": OutOfTreeBuild, "build_ext": CMakeBuild, "egg_info": OutOfTreeEggInfo})
