'''mdxpost: mdxbench's postprocessing (perflogs to Elasticsearch, summaries, reports).'''
