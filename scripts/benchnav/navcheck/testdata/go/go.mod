module example.com/nav

go 1.22
