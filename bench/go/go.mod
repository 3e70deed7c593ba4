module wsr.example/bench

go 1.19
