# A block of zero threads is not a launch configuration.
# expect: TC804 line 9

from tilecheck.program import T


@T.function
def zero_block(A: T.Tensor((4, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=0))
