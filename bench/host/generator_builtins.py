# Generators consumed by builtins, 3,000 x 300 items each (docs/performance.md,
# "Generators consumed by builtins"): run it with build/gpy and with python3.
import time
def bench(name, f):
    t = time.perf_counter(); f(); print(name, round((time.perf_counter() - t) * 1000, 1), 'ms')
R = range(300)
def a():
    for i in range(3000): s = set(x for x in R)
def b():
    for i in range(3000): s = {x for x in R}
def c():
    for i in range(3000): s = sum(x for x in R)
def d():
    for i in range(3000): s = tuple(x * 2 for x in R)
def e():
    for i in range(3000): s = any(x > 1000 for x in R)
def f():
    for i in range(3000): s = ''.join(str(x) for x in range(30))
def g():
    for i in range(3000): s = list(x for x in R)
def h():
    def gen(n):
        for i in range(n):
            yield i
    for i in range(3000):
        for v in gen(300): pass
for n, fn in [('set(ge)', a), ('setcomp', b), ('sum(ge)', c), ('tuple(ge)', d), ('any(ge)', e), ('join(ge)', f), ('list(ge)', g), ('for in gen', h)]:
    bench(n, fn)
