module weftbench/tasks

go 1.19
