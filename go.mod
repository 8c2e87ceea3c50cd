module github.com/specd-dev/specd

go 1.26
