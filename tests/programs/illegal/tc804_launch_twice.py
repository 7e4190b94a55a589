# The launch configuration is set once per kernel.
# expect: TC804 line 10

from tilecheck.program import T


@T.function
def launched_twice(A: T.Tensor((4, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
