module example.com/vendored

go 1.22

require example.com/dep v1.2.0
