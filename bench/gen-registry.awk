# Writes a synthetic benchgate project with N gates into DIR:
#   awk -v n=N -v dir=DIR -f bench/gen-registry.awk
# Each gate is measured and names two retained measurements: one imported from
# an evidence index, one registered as an additional measurement.
function gate(i, sep) {
	printf "%s{\"id\": \"g%07d\", \"module\": \"Module %d\", \"operation\": \"op\", \"platform\": \"%s\", \"computer\": \"Bench box\", \"configuration\": \"c%d\", \"state\": \"measured\", \"satisfied_by\": [\"bench-box-imp-%07d\", \"bench-box-add-%07d\"], \"runbook\": \"rb%d\", \"priority\": %d, \"next_gate\": \"\"}\n", sep, i, i % 7, plat[i % 4], i % 3, i, i, i % 5, 1 + i % 5 > reg
}
BEGIN {
	plat[0] = "CPU"; plat[1] = "CUDA"; plat[2] = "WebGPU"; plat[3] = "Python MPS"
	reg = dir "/benchmarks/benchmark_registry.json"
	ev = dir "/experiments/e/evidence-index.json"
	cfg = dir "/benchgate.json"
	system("mkdir -p " dir "/benchmarks " dir "/experiments/e " dir "/docs/_generated")
	printf "{\"schema_version\": 1, \"computers\": [{\"label\": \"Bench box\", \"slug\": \"bench-box\"}], \"computer_rules\": [{\"device_contains\": \"Bench CPU\", \"computer\": \"Bench box\"}]}\n" > cfg
	printf "{\"artifacts\": [{\"id\": \"a\", \"implementation_revision\": \"0123456789abcdef0123456789abcdef01234567\"}], \"measurements\": [\n" > ev
	for (i = 0; i < n; i++)
		printf "%s{\"id\": \"host-imp-%07d\", \"artifact_id\": \"a\", \"functional_area\": \"Module %d\", \"platform\": \"%s\", \"device\": \"Bench CPU %d\", \"date\": \"2026-11-30\", \"fixture_sha256\": \"a3f1c0de9b8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817060504\", \"source_scan_rows\": 64, \"source_scan_columns\": 64, \"source_detector_rows\": 128, \"source_detector_columns\": 128, \"working_detector_rows\": 128, \"working_detector_columns\": 128, \"detector_bin\": 1, \"sample_count\": 7, \"wall_p50_seconds\": %.6f, \"wall_p95_seconds\": %.6f, \"wall_max_seconds\": %.6f, \"process_peak_rss_bytes\": %d, \"parity\": \"byte-identical\"}\n", (i ? "," : ""), i, i % 7, plat[i % 4], i % 9, 0.01 + i / 1e6, 0.02 + i / 1e6, 0.03 + i / 1e6, 1048576 * (1 + i % 100) > ev
	printf "]}\n" > ev
	printf "{\"schema_version\": 1, \"protocol_version\": \"bench/v1\", \"evidence_imports\": [{\"path\": \"experiments/e/evidence-index.json\"}], \"additional_measurements\": [\n" > reg
	for (i = 0; i < n; i++)
		printf "%s{\"measurement_id\": \"bench-box-add-%07d\", \"module\": \"Module %d\", \"operation\": \"op\", \"platform\": \"%s\", \"computer\": \"Bench box\", \"device\": \"Bench CPU\", \"p50_seconds\": 0.5, \"p95_seconds\": 0.6, \"max_seconds\": 0.7, \"parity\": \"exact\", \"state\": \"measured\", \"tested_date\": \"2026-11-30\"}\n", (i ? "," : ""), i, i % 7, plat[i % 4] > reg
	printf "], \"configurations\": {" > reg
	for (c = 0; c < 3; c++)
		printf "%s\"c%d\": {\"source_scan_rows\": 64, \"source_scan_columns\": 64, \"selected_scan_rows\": 64, \"selected_scan_columns\": 64, \"source_detector_rows\": 128, \"source_detector_columns\": 128, \"scan_bin\": 1, \"detector_bin\": %d, \"output_detector_rows\": %d, \"output_detector_columns\": %d, \"source_dtype\": \"uint16\", \"working_dtype\": \"uint32\", \"cache_state\": \"warm\", \"timing_boundary\": \"bin\"}", (c ? ", " : ""), c, 2 ^ c, 128 / 2 ^ c, 128 / 2 ^ c > reg
	printf "}, \"runbooks\": {" > reg
	for (r = 0; r < 5; r++)
		printf "%s\"rb%d\": {\"title\": \"t\", \"owner\": \"Bench box\", \"tier\": \"scheduled\", \"evidence_level\": \"physical performance\", \"command\": \"run --bin {detector_bin}\", \"preflight\": [], \"required_environment\": [], \"required_artifacts\": [\"json\"]}", (r ? ", " : ""), r > reg
	printf "}, \"gates\": [\n" > reg
	for (i = 0; i < n; i++)
		gate(i, i ? "," : "")
	printf "]}\n" > reg
}
