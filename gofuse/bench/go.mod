module fuseclonequeues/gofuse_bench

go 1.19
