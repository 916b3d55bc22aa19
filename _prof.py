exec(open('_bench_try.py').read().split("a=lap(X)")[0])
import cProfile, pstats
lap(X)
cProfile.run('lap(X)', '/tmp/lap.prof')
p=pstats.Stats('/tmp/lap.prof'); p.sort_stats('tottime').print_stats(15)
