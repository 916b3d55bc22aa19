import benchmarks  # pins threads
import time, numpy as np, transforms as T, transforms.numpy as tnp
rng=np.random.default_rng(0)
d,h=100,128
W1=rng.normal(size=(d,h))/np.sqrt(d); b1=rng.normal(size=h)*0.1
W2=rng.normal(size=(h,h))/np.sqrt(h); b2=rng.normal(size=h)*0.1
W3=rng.normal(size=(h,))/np.sqrt(h)
def f(x):
    a=tnp.tanh(x@W1+b1); a=tnp.tanh(a@W2+b2); return a@W3
X=rng.normal(size=(256,d))
lap=T.vmap(T.laplacian(f))
tr=T.vmap(lambda x: tnp.trace(T.hessian(f)(x)))
E=np.eye(d)
hv=T.vmap(lambda x,v: tnp.dot(v, T.hvp(f,(x,),(v,))[1][0]) , (0,None))
def loop():
    return sum(hv(X,E[i]) for i in range(d))
def tm(fn,n=3):
    fn(); t=time.perf_counter()
    for _ in range(n): fn()
    return (time.perf_counter()-t)/n
a=lap(X); b=tr(X); print(np.abs(a-b).max(), np.abs(loop()-a).max())
tl=tm(lambda: lap(X)); tt=tm(lambda: tr(X)); th=tm(loop,1)
print("lap",tl,"trace(hess)",tt,"hvp loop",th, tl/tt, tl/th)
