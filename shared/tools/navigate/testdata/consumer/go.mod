module example.com/consumer

go 1.22

require example.com/nav v0.0.0

replace example.com/nav => ../gomodule
