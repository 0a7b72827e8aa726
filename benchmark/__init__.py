"""SA-Bench dataset, runner, scoring of repositories, reports and the `sabench` CLI."""
