module example.com/imagebuild-extra

go 1.26.0
