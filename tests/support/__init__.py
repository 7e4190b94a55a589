"""Code shared by several test folders (imported as ``support``: pytest's default "prepend"
import mode puts ``tests/``, the folder of the root conftest, on ``sys.path``)."""
