import polars as pl
import opendp.prelude as dp
dp.enable_features("contrib")
domain = dp.with_margin(dp.lazyframe_domain([dp.series_domain("x", dp.atom_domain(T="f64", nan=False))]),
                        dp.polars.Margin(by=[], max_length=100))
lf = pl.LazyFrame({"x": [0.1, 0.5, 0.9]}, schema={"x": pl.Float64})
m = dp.m.make_private_lazyframe(domain, dp.symmetric_distance(), dp.max_divergence(),
                                lf.select(pl.col("x").dp.count()), global_scale=1.0)
print("one release:", m(lf).collect().item(), flush=True)
both = dp.c.make_composition([m, m])
outs = both(lf)
print("composed:", [type(o).__name__ for o in outs], flush=True)
print(outs[0].collect())  # OpenDP 0.16.0, Polars 1.36.1: Segmentation fault (exit 139)
