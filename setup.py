"""Builds ropekit's extension with CMake (pyproject.toml has the metadata): configure this checkout with the
interpreter that runs pip, build the `_ropekit` target only, and copy it into the package. No network."""

import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.join(os.path.abspath(self.build_temp), "cmake")
        args = ["-DCMAKE_BUILD_TYPE=Release", "-DROPEKIT_TESTS=OFF", "-DROPEKIT_PYTHON=ON",
                f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ccache"):
            args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        subprocess.run(["cmake", "-S", ROOT, "-B", build, *args], check=True, stdout=subprocess.DEVNULL)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.run(["cmake", "--build", build, "--target", "_ropekit", "ropekit_ceres", "-j", jobs], check=True)
        built = os.path.join(build, "python", "ropekit", "_ropekit" + sysconfig.get_config_var("EXT_SUFFIX"))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(built, target)
        # The Ceres module, loaded on first use of fit_params / fit_spectrum from the extension's directory.
        shutil.copy2(os.path.join(build, "libropekit_ceres.so"), os.path.dirname(target))


setup(ext_modules=[Extension("ropekit._ropekit", sources=[])], cmdclass={"build_ext": CMakeBuild})
