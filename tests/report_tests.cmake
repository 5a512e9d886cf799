# HTML report (report/): CPU-only, run in CI. The fixture page can be regenerated for viewing:
#   GEMMTUNE_REPORT_HTML=/tmp/report.html GEMMTUNE_REPORT_DB=/tmp/fixture.db ctest -R reportPage
set(report_test_libs gemmtune_report gemmtune_db gemmtune_generator)
gemmtune_add_test(report_test SOURCES report_test.cpp LIBS ${report_test_libs})
gemmtune_add_test(report_cli_test SOURCES report_cli_test.cpp CliRunner.cpp LIBS ${report_test_libs})
