// placeholder: replaced by the inference work (assembles models/*.onnx from @imgly/background-removal-data)
