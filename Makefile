# Conveniences; the scripts are the real thing (they also install deps).
.PHONY: quickstart test build clean
quickstart:
	bash scripts/quickstart.sh
test:
	bash scripts/test.sh
build:
	bash scripts/build.sh build
clean:
	rm -rf build build-asan
