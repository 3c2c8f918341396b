"""Build script for katacli.

The Cython core is the private package ``katacli._core``; its modules ``cimport``
each other by their installed dotted names (``from katacli._core.board cimport ...``). The ``.pxd`` contracts are installed
with the package so third-party Cython code can cimport them too.
"""
import os
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_py import build_py

try:
    from Cython.Build import cythonize
except ImportError:  # pragma: no cover - pyproject.toml always provides Cython
    sys.exit("katacli needs Cython to build: pip install Cython")

HERE = os.path.dirname(os.path.abspath(__file__))

# One extension per .pyx file in katacli/_core/.
CORE_MODULES = sorted(
    name[:-4] for name in os.listdir(os.path.join(HERE, "katacli", "_core")) if name.endswith(".pyx")
)

# -pthread: leaf_workers runs helper threads (POSIX threads). -fno-trapping-math: nothing reads the
# floating-point exception flags, so the compiler may vectorize loops with a select of two floats (the policy
# softmax); it changes no result (unlike -ffast-math, it neither reorders nor drops any operation).
# -g0: no debug information (the core's .so files were 6x their size with it).
COMPILE_ARGS = ["-O3", "-g0", "-fno-strict-aliasing", "-fno-trapping-math", "-pthread"]
LINK_ARGS = ["-pthread"]
if os.environ.get("KATACLI_NATIVE", "") == "1":
    COMPILE_ARGS.append("-march=native")

extensions = [
    Extension(
        f"katacli._core.{name}",
        [f"katacli/_core/{name}.pyx"],
        extra_compile_args=COMPILE_ARGS,
        extra_link_args=LINK_ARGS,
        language="c",
    )
    for name in CORE_MODULES
]


class BuildPyWithExampleConfigs(build_py):
    """Also copies the commented example configs (configs/*.cfg) into the package, as resources/configs/: an
    installed `kata selfplay` without -config uses selfplay_example.cfg (katacli.example_configs finds it)."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "katacli", "resources", "configs")
        self.mkpath(target)
        source = os.path.join(HERE, "configs")
        if not os.path.isdir(source):
            sys.exit(f"katacli's example configs are missing: {source} (a source tree without configs/)")
        for name in sorted(os.listdir(source)):
            if name.endswith(".cfg"):
                self.copy_file(os.path.join(source, name), os.path.join(target, name))


def read_version():
    with open(os.path.join(HERE, "katacli", "__init__.py")) as f:
        for line in f:
            if line.startswith("__version__"):
                return line.split("=")[1].strip().strip("\"'")
    raise RuntimeError("no __version__ in katacli/__init__.py")


setup(
    name="katacli",
    version=read_version(),
    description="KataGo rebuilt as a Python toolkit: GTP and analysis engines, self-play and training",
    long_description=open(os.path.join(HERE, "README.md")).read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.11",
    packages=find_packages(include=["katacli", "katacli.*"]),
    # nets/: the default network and the record of how it was trained (katacli/nets/__init__.py).
    package_data={"katacli._core": ["*.pxd", "*.pyx"],
                  "katacli": ["resources/*", "selfcheck/data/*", "nets/*.bin.gz", "nets/*.json"]},
    include_package_data=True,
    exclude_package_data={"katacli._core": ["*.c"]},   # Cython's generated C: build input, not package
    cmdclass={"build_py": BuildPyWithExampleConfigs},
    ext_modules=cythonize(
        extensions,
        language_level=3,
        compiler_directives={
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    ),
    install_requires=[
        "numpy",
        "torch==2.13.0",
        "typer>=0.12",
        "rich>=13",
        "h5py",
        "sgfmill>=1.1",
        "matplotlib>=3.7",  # kata train's loss-curve plot
    ],
    # Cython is in the test extras for the check that installed .pxd contracts can be cimported;
    # ruff is the linter scripts/test.sh runs before the tests (rules in pyproject.toml).
    extras_require={"test": ["pytest>=7", "Cython>=3.0", "setuptools>=64", "ruff>=0.6"]},
    entry_points={"console_scripts": ["kata=katacli.cli:main"]},
    zip_safe=False,
)
