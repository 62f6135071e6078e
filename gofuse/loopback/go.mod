module fuseclonequeues/gofuse_loopback

go 1.19
